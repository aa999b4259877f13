import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    // note: test files share their worker's modules instead of importing everything again
    // per file (about 60% of the suite's time went to that). A file must therefore leave no
    // state behind: apps are closed after each file by test/setup.ts, and module-level state
    // in src is either per app or keyed by ids that never repeat.
    isolate: false,
    setupFiles: ['test/setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/global-setup.ts'],
  },
});
