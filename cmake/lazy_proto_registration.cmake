# Run as `cmake -DPB_CC=<file>.pb.cc -P lazy_proto_registration.cmake` after protoc.
#
# protoc (3.21) registers every .proto file's descriptors with the generated pool in a static initialiser, so every
# gcm process paid for parsing the OTLP descriptors before main(): 0.6 M instructions and the pages of the descriptor
# parser, in a health check that never touches protobuf. Registration happens anyway on first use: a message's
# descriptor()/GetMetadata() goes through AssignDescriptors(), which adds the file and its dependencies to the pool
# first. Nothing here looks a type up by name before using one of its messages, so the eager runner is removed.
# The step fails when the line is not found, so that a protoc that generates something else is noticed at build
# time rather than silently keeping the cost.
file(READ "${PB_CC}" text)
string(REGEX MATCH "\n[^\n]*static ::_pbi::AddDescriptorsRunner dynamic_init_dummy_[A-Za-z0-9_]+\\([^\n]*\\);\n" runner
       "${text}")
if(NOT runner)
  message(FATAL_ERROR "${PB_CC}: no AddDescriptorsRunner line to remove (protoc's output changed?)")
endif()
string(REPLACE "${runner}" "\n// (descriptor registration made lazy by cmake/lazy_proto_registration.cmake)\n" text "${text}")
file(WRITE "${PB_CC}" "${text}")
