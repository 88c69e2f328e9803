# kvlog's LevelDB addon: binding.cc (classic-level's, MIT, with kvlog's additions) over LevelDB 1.20 and
# Snappy as classic-level ships them, staged by build-addon.mjs into deps/ with leveldb/ (kvlog's changes
# to three of LevelDB's files) laid over them. Built by build-addon.mjs on install, never by hand.
{
  "variables": {
    "openssl_fips": "",
    "android_ndk_path": ""
  },
  "targets": [{
    "target_name": "kvlog_level",
    "conditions": [
      ["OS == 'linux'", {
        "cflags": [],
        "cflags!": ["-fno-tree-vrp"]
      }],
      ["OS == 'mac'", {
        "cflags+": ["-fvisibility=hidden"],
        "xcode_settings": {
          "GCC_SYMBOLS_PRIVATE_EXTERN": "YES",
          "MACOSX_DEPLOYMENT_TARGET": "10.7"
        }
      }]
    ],
    "dependencies": ["deps/leveldb/leveldb.gyp:leveldb"],
    "include_dirs": ["deps/napi-macros"],
    "sources": ["binding.cc"]
  }]
}
