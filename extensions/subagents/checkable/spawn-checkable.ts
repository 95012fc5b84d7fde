/**
 * The spawn-time part of checkable children: output_schema and isolation are validated and prepared before a
 * child exists (a broken schema, no repository, git missing or a failing `git worktree add` fail that spawn
 * alone, with no child started), and turned into the run steps, the first message and the spawn note.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import { WORKTREES_FOLDER } from "../domain/entries.ts";
import type { ChildRecord } from "../domain/records.ts";
import {
	badIsolationError,
	badOutputSchemaError,
	isolationNote,
	notARepositoryError,
	outputSchemaInstruction,
	structuredNote,
	worktreeFailedError,
} from "../prompt/checkable.ts";
import { isolationSteps, structuredSteps } from "./checkable.ts";
import { BRANCH_PREFIX, createWorktree, probeRepository, removeWorktree, type Worktree } from "./isolation.ts";
import { composeSteps, type RunSteps } from "./run-steps.ts";
import { compileOutputSchema } from "./schema.ts";

/** Folder of the children's worktrees inside the store root (domain/entries.ts). */
export { WORKTREES_FOLDER };

export const ISOLATION_MODES = ["none", "worktree"] as const;

export interface CheckableRequest {
	/** subagent_spawn's isolation parameter, unvalidated. */
	isolation?: string;
	/** subagent_spawn's output_schema parameter, unvalidated. */
	outputSchema?: unknown;
	/** The child's cwd as resolved in the parent's tree. */
	cwd: string;
	/** The first message the child would get. */
	firstMessage: string;
}

export interface Checkable {
	/** The id reserved for an isolated child (its worktree is named after it). */
	id?: string;
	/** Where the child works: inside its worktree when isolated. */
	cwd: string;
	/** The first message, with the schema instruction when structured. */
	firstMessage: string;
	steps?: RunSteps;
	worktree?: Worktree;
	structured: boolean;
	/** Sentences for the spawn result. */
	notes: string[];
	/** Keys for the spawn result's details. */
	details: Record<string, unknown>;
	/** Undo what was prepared when the spawn itself then fails. */
	abandon(): Promise<void>;
}

/** Where worktrees go: a folder of the artifact store, under Pi's agent dir (which Pi trusts). */
export interface WorktreeHome {
	store(): ArtifactStore;
	agentDir(): string;
}

function worktreesRoot(home: WorktreeHome): { root: string; trustedRoot: string } {
	return { root: join(home.store().root, WORKTREES_FOLDER), trustedRoot: home.agentDir() };
}

/** Validate and prepare; throws an Error worded for the model, with nothing left behind. */
export async function prepareCheckable(
	home: WorktreeHome,
	reserveId: () => string,
	request: CheckableRequest,
): Promise<Checkable> {
	const mode = request.isolation ?? "none";
	if (!(ISOLATION_MODES as readonly string[]).includes(mode)) throw new Error(badIsolationError(mode));
	const parts: RunSteps[] = [];
	const notes: string[] = [];
	const details: Record<string, unknown> = {};
	let firstMessage = request.firstMessage;
	let structured = false;
	if (request.outputSchema !== undefined && request.outputSchema !== null) {
		const compiled = compileOutputSchema(request.outputSchema);
		if (!compiled.ok) throw new Error(badOutputSchemaError(compiled.error));
		parts.push(structuredSteps(compiled.schema));
		firstMessage += outputSchemaInstruction(compiled.schema.text);
		notes.push(structuredNote());
		details.outputSchema = compiled.schema.schema;
		structured = true;
	}
	if (mode !== "worktree") {
		return {
			cwd: request.cwd,
			firstMessage,
			steps: composeSteps(parts),
			structured,
			notes,
			details,
			abandon: async () => undefined,
		};
	}
	const probe = await probeRepository(request.cwd);
	if (!probe.ok) throw new Error(notARepositoryError(probe.reason));
	const id = reserveId();
	const name = `${id}-${randomBytes(4).toString("hex")}`;
	const where = worktreesRoot(home);
	let worktree: Worktree;
	try {
		worktree = await createWorktree({ repo: probe.repo, name, ...where });
	} catch (error) {
		throw new Error(worktreeFailedError((error as Error).message));
	}
	parts.push(isolationSteps({ id, worktree, store: home.store(), name, ...where }));
	notes.push(isolationNote(worktree));
	details.isolation = { ...worktree, carriesUncommitted: false };
	return {
		id,
		cwd: worktree.cwd,
		firstMessage,
		steps: composeSteps(parts),
		worktree,
		structured,
		notes,
		details,
		abandon: () => removeWorktree(worktree).catch(() => undefined),
	};
}

/** Run steps for a restored isolated child run again: its worktree report, as in the first process. */
export function isolationFor(home: WorktreeHome, child: ChildRecord): RunSteps | undefined {
	const worktree = child.worktree;
	if (!worktree) return undefined;
	const name = worktree.branch.startsWith(BRANCH_PREFIX) ? worktree.branch.slice(BRANCH_PREFIX.length) : child.id;
	return isolationSteps({ id: child.id, worktree, store: home.store(), name, ...worktreesRoot(home) });
}
