'use strict';
// The flags the image's tests run it with to trace (test/image/image.test.js:
// doctor passes with them and nothing more), and which the Kubernetes
// manifests are held to (test/kubernetes-manifests.test.js: each flag is a
// pod-spec field there). Change one and that test says what the manifests
// must say.
const TRACING_FLAGS = ['--privileged', '--pid=host', '-v', '/sys/kernel/tracing:/sys/kernel/tracing'];

module.exports = { TRACING_FLAGS };
