// Anthropic's JavaScript SDK against pshard-server's Messages API: a message, a stream
// read by the SDK's helper (finalMessage), a tool_use block, a token count and a refusal;
// prints what it got as one JSON object.
//
// usage: node anthropic_client.mjs BASE_URL API_KEY MODEL MESSAGE MAX_TOKENS
import Anthropic from "@anthropic-ai/sdk";

const [baseURL, apiKey, model, message, maxTokens] = process.argv.slice(2);
const client = new Anthropic({baseURL, apiKey, maxRetries: 0, timeout: 60000});
const max_tokens = Number(maxTokens);
const messages = [{role: "user", content: message}];
const out = {};

const answer = await client.messages.create({model, max_tokens, messages, temperature: 0});
out.text = answer.content.filter((b) => b.type === "text").map((b) => b.text).join("");
out.stop_reason = answer.stop_reason;
out.usage = answer.usage;

const stream = client.messages.stream({model, max_tokens, messages, temperature: 0});
let deltas = "";
stream.on("text", (text) => { deltas += text; });
const final = await stream.finalMessage();
out.stream_deltas = deltas;
out.stream_text = final.content.filter((b) => b.type === "text").map((b) => b.text).join("");
out.stream_stop_reason = final.stop_reason;

const tools = [{name: "get_weather", description: "Weather in a city",
  input_schema: {type: "object", properties: {city: {type: "string", maxLength: 20}}, required: ["city"]}}];
const called = await client.messages.create({model, max_tokens: 200, temperature: 0, tools,
  tool_choice: {type: "any", disable_parallel_tool_use: true},
  messages: [{role: "user", content: "Weather in Paris?"}]});
out.tool_use = called.content.filter((b) => b.type === "tool_use");
out.tool_stop_reason = called.stop_reason;
const calledStream = await client.messages.stream({model, max_tokens: 200, temperature: 0, tools,
  tool_choice: {type: "any", disable_parallel_tool_use: true},
  messages: [{role: "user", content: "Weather in Paris?"}]}).finalMessage();
out.tool_use_stream = calledStream.content.filter((b) => b.type === "tool_use");

const counted = await client.messages.countTokens({model, messages});
out.count = counted.input_tokens;

try {
  await client.messages.create({model, messages, max_tokens: 1 << 24});
  out.too_long = {status: 200};
} catch (e) {
  out.too_long = {status: e.status, name: e.constructor.name, type: e.error?.error?.type};
}
console.log(JSON.stringify(out));
