'use strict'

// The addon under kvlog's copy of classic-level's JavaScript layer: kvlog's build (../build, from
// ../binding.cc, built by ../build-addon.mjs on install) when the install built it, else classic-level's
// own, which its package loads (the prebuilt addon for the platform). classic-level's dependencies
// (abstract-level, module-error) are resolved from its package, wherever the install put them.
const { existsSync } = require('node:fs')
const { createRequire } = require('node:module')
const { join } = require('node:path')

const fromClassicLevel = createRequire(require.resolve('classic-level/package.json'))
const built = join(__dirname, '..', 'build', 'Release', 'kvlog_level.node')
const kvlogAddonFile = existsSync(built) ? built : undefined
const binding = kvlogAddonFile !== undefined ? require(kvlogAddonFile) : fromClassicLevel('./binding.js')

module.exports = { binding, fromClassicLevel, kvlogAddonFile }
