'use strict'

// classic-level 3.0.0's chained-batch.js (MIT, ../LICENSE-classic-level) as kvlog loads it: over the addon that
// load.cjs picks, with classic-level's own dependencies (the requires above its code changed for that).

const { binding, fromClassicLevel } = require('./load.cjs')
const { AbstractChainedBatch } = fromClassicLevel('abstract-level')

const kContext = Symbol('context')

class ChainedBatch extends AbstractChainedBatch {
  constructor (db, context) {
    super(db)
    this[kContext] = binding.batch_init(context)
  }

  _put (key, value) {
    binding.batch_put(this[kContext], key, value)
  }

  _del (key) {
    binding.batch_del(this[kContext], key)
  }

  _clear () {
    binding.batch_clear(this[kContext])
  }

  async _write (options) {
    return binding.batch_write(this[kContext], options)
  }

  async _close () {
    // TODO: close native batch (currently done on GC)
  }
}

exports.ChainedBatch = ChainedBatch
