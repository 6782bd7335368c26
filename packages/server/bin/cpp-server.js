#!/usr/bin/env node
// npm links bins at install time, before the build: this committed entry keeps `cpp-server` executable either way.
import '../bundle/cli/cpp-server.js';
