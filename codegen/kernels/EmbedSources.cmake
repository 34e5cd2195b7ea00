# Writes OUT: a C++ initializer list of {"name.cuh", R"(text)"} pairs, one
# per file of SOURCES (comma-separated; sorted, so the output is stable), so
# the compiler hands the kernel templates to NVRTC from memory. Run by
# codegen/CMakeLists.txt whenever a template changes.
string(REPLACE "," ";" SOURCES "${SOURCES}")
list(SORT SOURCES)
file(WRITE ${OUT} "// Generated from codegen/kernels/cuda by EmbedSources.cmake.\n")
foreach(path ${SOURCES})
  get_filename_component(name ${path} NAME)
  file(READ ${path} text)
  file(APPEND ${OUT} "{\"${name}\", R\"ingot_cuh(${text})ingot_cuh\"},\n")
endforeach()
