/** Jest runs the TypeScript sources directly through SWC (no type-check here: `npm run typecheck` does that). */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
        sourceMaps: 'inline',
      },
    ],
  },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  testMatch: ['<rootDir>/test/**/*.test.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.js',
  globalTeardown: '<rootDir>/test/support/global-teardown.js',
  testTimeout: 30000,
  maxWorkers: 2,
  // Under --experimental-vm-modules on Node 20 a worker keeps every finished test file's module graph
  // (brokers, clients and all): about 20 MiB a file, over 1 GiB by the end of the run. A worker whose heap
  // passes this after a file is replaced, so heap checks and collections in later files stay small and fast.
  workerIdleMemoryLimit: '300MB',
};
