import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/helpers/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // In CI a failed test is tried once more (vitest reports it as flaky); locally every failure shows at once.
    retry: process.env.CI ? 1 : 0,
  },
});
