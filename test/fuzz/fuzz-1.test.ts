// Part 1 of the fuzz suite (test/fuzz/suite.ts says what it checks and how it is split).
import { fuzzSuite } from './suite.js';

fuzzSuite(0, 2);
