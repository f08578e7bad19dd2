# The USDT addon (src/usdt.c) is only needed on Linux: DTrace systems use the
# dtrace-provider package instead. Built by scripts/build-native.js at install.
{
  "targets": [
    {
      "target_name": "nodetrace_usdt",
      "conditions": [
        ["OS=='linux'", {
          "sources": ["src/usdt.c"],
          "cflags": ["-O2", "-Wall", "-Wextra", "-Wno-unused-parameter"],
          "libraries": ["-ldl"]
        }, {
          "type": "none"
        }]
      ]
    }
  ]
}
