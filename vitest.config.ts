import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["test/**/*.test.ts"],
		// Every test folder is removed when its file ends; the teardown fails the run if .tmp/ holds leftovers.
		setupFiles: ["test/fixtures/vitest-setup.ts"],
		globalSetup: ["test/fixtures/global-setup.ts"],
		pool: "forks",
		poolOptions: { forks: { maxForks: 2, minForks: 1 } },
		testTimeout: 120_000,
		hookTimeout: 60_000,
		reporters: ["default"],
	},
});
