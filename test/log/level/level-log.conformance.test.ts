/** Runs the log conformance suite against LevelLog, with fsync 'always' and 'never', on tiny limits. */
import { logConformanceSuite } from '../conformance/suite.js'
import { levelLogFactory } from './fixture.js'

logConformanceSuite('LevelLog (fsync always)', levelLogFactory('always'))
logConformanceSuite('LevelLog (fsync never)', levelLogFactory('never'))
