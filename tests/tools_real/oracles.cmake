# Oracles from outside the project, run as real programs: what OpenSM (the
# reference SM/SA) answers on the same served fabric.

# The SA's ClassPortInfo, field by field: OpenSM's answer must still be the
# recording the SA's unit tests use, and the built-in SA's must be OpenSM's.
add_test(NAME real.opensm_sa_class_port_info
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cpi_diff.py $<TARGET_FILE:ibfab>
                 ${PROJECT_SOURCE_DIR}/tests/sm/opensm_sa_class_port_info.txt)
set_tests_properties(real.opensm_sa_class_port_info PROPERTIES TIMEOUT 300)

# The LFTs and MFTs each SM writes (ibroute, ibroute -M) and its PathRecords
# (saquery -p), with the built-in SM and with OpenSM on the same topology and
# routing engine: what must agree where tie-breaking may differ
# (routes_diff.py says what and why).
foreach(_engine minhop updn ftree)
  add_test(NAME real.opensm_routes_${_engine}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/routes_diff.py $<TARGET_FILE:ibfab> ${_engine})
  set_tests_properties(real.opensm_routes_${_engine} PROPERTIES TIMEOUT 600)
endforeach()
