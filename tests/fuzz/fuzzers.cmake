# One ibfab_add_fuzzer(...) line per fuzz target.
ibfab_add_fuzzer(fuzz_netfile ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_netfile.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/netfile 20000)
ibfab_add_fuzzer(fuzz_addresses ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_addresses.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/addresses 20000)
ibfab_add_fuzzer(fuzz_packet ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_packet.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/packet 50000)
ibfab_add_fuzzer(fuzz_node_receive ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_node_receive.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/node_receive 30000)
ibfab_add_fuzzer(fuzz_sa_request ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_sa_request.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/sa_request 30000)
target_sources(fuzz_sa_request PRIVATE ${PROJECT_SOURCE_DIR}/sm/sa/sa_enums.cpp ${PROJECT_SOURCE_DIR}/sm/sa/mcast_groups.cpp ${PROJECT_SOURCE_DIR}/sm/sa/rmpp_sender.cpp ${PROJECT_SOURCE_DIR}/sm/sa/path_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/node_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/port_info_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/link_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/multi_path_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/switch_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/port_table_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/qos_table_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/sm_info_records.cpp ${PROJECT_SOURCE_DIR}/sm/sa/service_table.cpp ${PROJECT_SOURCE_DIR}/sm/sa/inform_table.cpp ${PROJECT_SOURCE_DIR}/sm/sa/sa_agent.cpp)
get_target_property(_sm_srcs ibfab_sm SOURCES)
list(TRANSFORM _sm_srcs PREPEND ${PROJECT_SOURCE_DIR}/sm/)
get_target_property(_server_srcs ibfab_server SOURCES)
list(TRANSFORM _server_srcs PREPEND ${PROJECT_SOURCE_DIR}/api/server/)
get_target_property(_kernel_srcs ibfab_kernel SOURCES)
list(TRANSFORM _kernel_srcs PREPEND ${PROJECT_SOURCE_DIR}/api/server/kernel/)
set(_engine_srcs ${_sm_srcs} ${_server_srcs} ${_kernel_srcs}
  ${PROJECT_SOURCE_DIR}/api/client/seqpacket.cpp ${PROJECT_SOURCE_DIR}/api/client/shared_memory.cpp
  ${PROJECT_SOURCE_DIR}/api/client/socket_path.cpp)
ibfab_add_fuzzer(fuzz_engine_request ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_engine_request.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/engine_request 30000)
target_sources(fuzz_engine_request PRIVATE ${_engine_srcs})
ibfab_add_fuzzer(fuzz_verbs_rings ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_verbs_rings.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/verbs_rings 20000)
target_sources(fuzz_verbs_rings PRIVATE ${_engine_srcs})
ibfab_add_fuzzer(fuzz_scenario ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_scenario.cpp ${PROJECT_SOURCE_DIR}/scenarios 20000)
target_sources(fuzz_scenario PRIVATE ${PROJECT_SOURCE_DIR}/tools/scenario/scenario_loader.cpp
  ${PROJECT_SOURCE_DIR}/tools/scenario/action_chunks.cpp ${PROJECT_SOURCE_DIR}/tools/scenario/yaml_budget.cpp
  ${_sm_srcs})
target_link_libraries(fuzz_scenario PRIVATE yaml-cpp)
ibfab_add_fuzzer(fuzz_partitions ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_partitions.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/partitions 20000)
target_sources(fuzz_partitions PRIVATE ${PROJECT_SOURCE_DIR}/sm/partitions/partition_reader.cpp ${PROJECT_SOURCE_DIR}/sm/partitions/pkey_assignment.cpp ${PROJECT_SOURCE_DIR}/sm/sa/sa_enums.cpp)
ibfab_add_fuzzer(fuzz_cm_mad ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_cm_mad.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/cm_mad 30000)
ibfab_add_fuzzer(fuzz_rc_receive ${CMAKE_CURRENT_SOURCE_DIR}/fuzz_rc_receive.cpp ${CMAKE_CURRENT_SOURCE_DIR}/corpus/rc_receive 10000)
