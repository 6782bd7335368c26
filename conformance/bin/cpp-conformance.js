#!/usr/bin/env node
// npm links bins at install time, before the build: this committed entry keeps `cpp-conformance` executable either way.
import '../dist/cli.js';
