# tests/unit_tests.cmake - the unit tests (llmco2_tests), listed once: the release build runs them (tests/), and the
# fuzz build (clang, ASan and UBSan; fuzz/) builds them again as llmco2_unit_tests_sanitized, which make fuzz-ci runs.
set(LLMCO2_UNIT_TEST_SOURCES
  core/dtype_test.cc core/names_test.cc core/output_manifest_test.cc core/csv_test.cc core/json_io_test.cc core/dynamic_loading_test.cc core/log_histogram_test.cc
  dataset/dataset_csv_test.cc measured/importers_test.cc sim/simulator_test.cc sim/calibration_test.cc
  sim/setup_simulator_test.cc sim/pipeline_test.cc
  model/hf_config_test.cc
  hardware/gpu_catalog_test.cc hardware/catalog_index_test.cc hardware/host_power_test.cc hardware/roofline_test.cc hardware/engine_precision_test.cc
  graph/context_test.cc graph/layer_kernels_test.cc graph/kernel_graph_test.cc
  features/features_test.cc features/memory_plan_test.cc core/accuracy_test.cc predictor/model_file_test.cc predictor/gnn_test.cc predictor/gnn_prepared_test.cc predictor/sim_predictor_test.cc predictor/input_test.cc predictor/registry_test.cc
  sampling/focused_sampling_test.cc evaluation/report_test.cc
  carbon/carbon_test.cc trace/trace_test.cc trace/trace_stream_test.cc compare/compare_test.cc calibration/kernel_profiles_test.cc calibration/kernel_campaign_test.cc
  calibration/kernel_tables_test.cc
  calibration/collective_tables_test.cc
  calibration/screening_test.cc calibration/site_fit_test.cc
  invariants/physics_invariants_test.cc serving/serve_sim_test.cc reliability/input_bounds_test.cc
  api/api_test.cc api/consistency_test.cc api/knobs_test.cc api/serve_sim_consistency_test.cc
  research/research_test.cc research/throughput_fit_test.cc evidence/evidence_test.cc speculation/speculation_test.cc)
list(TRANSFORM LLMCO2_UNIT_TEST_SOURCES PREPEND ${CMAKE_CURRENT_LIST_DIR}/)
set(LLMCO2_UNIT_TEST_LIBRARIES llmco2_features llmco2_calibration llmco2_measured llmco2_sampling llmco2_predictor
    llmco2_evaluation llmco2_compare llmco2_serving llmco2_measure llmco2_api llmco2_research)
# A unit-test program of `sources` (paths under tests/), linked, defined and included as every unit-test program is:
# llmco2_tests, llmco2_threaded_tests (tsan) and llmco2_unit_tests_sanitized (fuzz).
function(llmco2_add_unit_test_program name)
  add_executable(${name} ${ARGN})
  target_link_libraries(${name} PRIVATE ${LLMCO2_UNIT_TEST_LIBRARIES} GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE LLMCO2_TESTDATA="${PROJECT_SOURCE_DIR}/tests/testdata"
                                             LLMCO2_FUZZ_CORPUS="${PROJECT_SOURCE_DIR}/fuzz/corpus")
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  # Its static_assert checks what this file's own includes bring in: it must stay a translation unit of its own in
  # unity builds.
  set_source_files_properties(${CMAKE_CURRENT_FUNCTION_LIST_DIR}/predictor/input_test.cc PROPERTIES
                              SKIP_UNITY_BUILD_INCLUSION ON)
endfunction()
# The one slow unit test (the full kernel fit of the committed profiles, ~25 s): ctest label slow; skipped under the
# sanitizers.
set(LLMCO2_SLOW_UNIT_TESTS "KernelProfile.CommittedFitReproducesReportedHeldOutAccuracy")
