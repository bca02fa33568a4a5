# Warnings shared by every pshard target; applied per target so that third-party
# code (generated FlatBuffers headers, MLIR) is not held to them.
function(pshard_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wno-unused-parameter)
endfunction()
