import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['./test/helpers/global-setup.ts'],
    include: ['test/**/*.test.ts'],
    // The fault suite (vitest.faults.config.ts, `npm run test:faults`) takes minutes; `npm test` stays fast.
    exclude: [...configDefaults.exclude, 'test/faults/**'],
    pool: 'forks',
    maxWorkers: 3,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    reporters: ['default'],
    // In CI a failed test is tried once more (vitest reports it as flaky); locally every failure shows at once.
    retry: process.env.CI ? 1 : 0,
  },
});
