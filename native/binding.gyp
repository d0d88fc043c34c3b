{
  "targets": [
    {
      "target_name": "rezolus_native",
      "sources": ["src/addon.cc", "src/bpf_object.cc", "src/perf.cc", "src/errors.cc", "src/scan.cc", "src/pack.cc"],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "libraries": ["-lbpf", "-lelf", "-lz"],
      "defines": ["NAPI_DISABLE_CPP_EXCEPTIONS", "NAPI_VERSION=8"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra", "-Wno-unused-parameter"]
    },
    {
      "target_name": "rezolus_malloc",
      "sources": ["src/malloc.c", "src/heap.cc"],
      "defines": ["NAPI_VERSION=8"],
      "cflags": ["-Wall", "-Wextra"],
      "cflags_cc": ["-std=c++17", "-Wall", "-Wextra"]
    }
  ]
}
