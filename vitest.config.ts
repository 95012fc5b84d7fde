import { defineConfig } from "vitest/config";

export default defineConfig({
	test: {
		include: ["test/**/*.test.ts"],
		pool: "forks",
		poolOptions: { forks: { maxForks: 2, minForks: 1 } },
		testTimeout: 120_000,
		hookTimeout: 60_000,
		reporters: ["default"],
	},
});
