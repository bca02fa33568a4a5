// The official OpenAI JavaScript library against pshard-server: chat and completion
// requests, streamed and not, function calls, embeddings, and refusals; prints what it got
// as one JSON object.
//
// usage: node openai_client.mjs BASE_URL API_KEY MODEL PROMPT CHAT_MESSAGE MAX_TOKENS
import OpenAI from "openai";

const [baseURL, apiKey, model, prompt, message, maxTokens] = process.argv.slice(2);
const client = new OpenAI({baseURL, apiKey, maxRetries: 0, timeout: 60000});
const max_tokens = Number(maxTokens);
const out = {};

const completion = await client.completions.create({model, prompt, max_tokens, temperature: 0});
out.completion = completion.choices[0].text;
out.completion_finish = completion.choices[0].finish_reason;
out.completion_usage = completion.usage;

let streamed = "";
for await (const chunk of await client.completions.create(
    {model, prompt, max_tokens, temperature: 0, stream: true})) {
  streamed += chunk.choices[0]?.text ?? "";
}
out.completion_stream = streamed;

const messages = [{role: "user", content: message}];
const chat = await client.chat.completions.create({model, messages, max_tokens, temperature: 0});
out.chat = chat.choices[0].message.content;
out.chat_role = chat.choices[0].message.role;
out.chat_object = chat.object;

let chatStreamed = "";
let finish = null;
const stream = await client.chat.completions.create(
    {model, messages, max_tokens, temperature: 0, stream: true, stream_options: {include_usage: true}});
for await (const chunk of stream) {
  if (chunk.usage) out.chat_stream_usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  chatStreamed += choice.delta?.content ?? "";
  finish = choice.finish_reason ?? finish;
}
out.chat_stream = chatStreamed;
out.chat_stream_finish = finish;

// Function calling: the library reads tool_calls whole and from stream deltas.
const tools = [{type: "function", function: {name: "get_weather", description: "Weather in a city",
  parameters: {type: "object", properties: {city: {type: "string", maxLength: 20}}, required: ["city"]}}}];
const toolRequest = {model, messages: [{role: "user", content: "Weather in Paris?"}], max_tokens: 200,
  temperature: 0, tools, tool_choice: "required", parallel_tool_calls: false};
const called = await client.chat.completions.create(toolRequest);
out.tool_finish = called.choices[0].finish_reason;
out.tool_calls = called.choices[0].message.tool_calls;
const toolStream = client.beta?.chat?.completions?.stream
    ? client.beta.chat.completions.stream(toolRequest)
    : client.chat.completions.stream(toolRequest);
const streamedCall = await toolStream.finalChatCompletion();
out.tool_calls_stream = streamedCall.choices[0].message.tool_calls;
out.tool_finish_stream = streamedCall.choices[0].finish_reason;

// The Responses API: output_text (the library's sum of the message items), a stream's
// events, and a function call item.
const response = await client.responses.create(
    {model, input: message, max_output_tokens: max_tokens, temperature: 0});
out.response_text = response.output_text;
out.response_status = response.status;
out.response_usage = response.usage;
let responseStreamed = "";
const types = [];
let finalResponse = null;
for await (const event of await client.responses.create(
    {model, input: message, max_output_tokens: max_tokens, temperature: 0, stream: true})) {
  types.push(event.type);
  if (event.type === "response.output_text.delta") responseStreamed += event.delta;
  if (event.type === "response.completed" || event.type === "response.incomplete")
    finalResponse = event.response;
}
out.response_stream = responseStreamed;
out.response_stream_types = types;
out.response_stream_final = finalResponse?.output_text ?? finalResponse?.output?.[0]?.content?.[0]?.text;
const responseCall = await client.responses.create({model, input: "Weather in Paris?",
  max_output_tokens: 200, temperature: 0, tool_choice: "required", parallel_tool_calls: false,
  tools: [{type: "function", name: "get_weather", description: "Weather in a city",
    parameters: tools[0].function.parameters}]});
out.response_call = responseCall.output.filter((item) => item.type === "function_call");

// Embeddings: the library asks for base64 by default and decodes it; floats when asked.
const embedded = await client.embeddings.create({model, input: [prompt, message]});
out.embeddings = embedded.data.map((d) => Array.from(d.embedding));
out.embeddings_usage = embedded.usage;
const floats = await client.embeddings.create({model, input: prompt, encoding_format: "float"});
out.embedding_float = floats.data[0].embedding;

const models = await client.models.list();
out.models = models.data.map((m) => m.id);

async function refusal(request) {
  try {
    await request();
    return {status: 200};
  } catch (e) {
    return {status: e.status, type: e.type, code: e.code, param: e.param, name: e.constructor.name};
  }
}
out.unknown_model = await refusal(() => client.completions.create({model: "gpt-4o", prompt, max_tokens}));
out.too_long = await refusal(() => client.completions.create({model, prompt, max_tokens: 1 << 20}));
const wrongKey = new OpenAI({baseURL, apiKey: "wrong", maxRetries: 0});
out.wrong_key = await refusal(() => wrongKey.completions.create({model, prompt, max_tokens}));

console.log(JSON.stringify(out));
