# One ibfab_add_fuzzer(...) line per fuzz target.
ibfab_add_fuzzer(fuzz_netfile ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_netfile.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/netfile 20000)
ibfab_add_fuzzer(fuzz_packet ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_packet.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/packet 50000)
ibfab_add_fuzzer(fuzz_node_receive ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_node_receive.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/node_receive 30000)
