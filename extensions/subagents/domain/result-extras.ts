/**
 * What a child's result carries besides its text (the structured-output verdict, an isolated child's
 * changes) and the worktree an isolated child works in: plain types shared by the domain, the run steps,
 * isolation and the tool results' details. Imports nothing, so every module that speaks of results can use
 * them without an import cycle.
 */

/** One isolated child's worktree. */
export interface Worktree {
	/** Absolute path of the worktree's root. */
	path: string;
	/** Its branch (created from `base`). */
	branch: string;
	/** The commit it started from (the parent's HEAD at spawn). */
	base: string;
	/** The parent repository's top level (where the patch applies). */
	repoTop: string;
	/** The child's working directory inside the worktree (the parent's relative cwd, mirrored). */
	cwd: string;
	/** Uncommitted entries the parent had at spawn, which the worktree does not contain. */
	parentUncommitted: number;
}

/** What a result carries besides its text, for tool-result details (other extensions read these). */
export interface ResultExtras {
	/** The structured-output verdict (children spawned with output_schema). */
	structured?: StructuredOutcome;
	/** What an isolated child changed in its worktree. */
	changes?: ChangesOutcome;
}

export type StructuredOutcome =
	| {
			/** The answer ended with JSON that validates against output_schema. */
			status: "valid";
			/** The parsed JSON value. */
			value: unknown;
			/** Correction turns it took (0 or 1). */
			corrections: number;
	  }
	| {
			/** Still not valid after the one correction turn (or the run could not be checked). */
			status: "invalid";
			/** The validator's first errors (or why no JSON was found). */
			errors: string[];
			/** The parsed JSON value when there was one. */
			value?: unknown;
			/** Correction turns it took (0 or 1). */
			corrections: number;
	  };

export interface ChangesOutcome {
	/** Worktree root (still there when kept). */
	worktree: string;
	/** The child's branch. */
	branch: string;
	/** The commit it started from. */
	base: string;
	/** Whether the worktree was kept (it has changes) or removed (none). */
	kept: boolean;
	/** Changed files with +/− counts (binary files have none). */
	files: Array<{ path: string; status: "added" | "modified" | "deleted"; added?: number; removed?: number }>;
	/** Commits the child made on its branch. */
	commits: number;
	/** Artifact holding the whole patch, when stored. */
	patchPath?: string;
	/** Why the changes could not be captured or stored, when that failed. */
	error?: string;
}
