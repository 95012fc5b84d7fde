/**
 * subagent_cleanup: remove the worktrees (and branches) isolated children left with changes, once the
 * parent has their work. Work that is not in the parent's working tree yet (its patch does not apply in
 * reverse there) is kept unless `discard` is set; the patch artifact stays in the store either way.
 */
import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { captureChanges, patchContainedIn, removeWorktree, worktreeExists } from "../checkable/isolation.ts";
import { type ChildRecord, isSettled, partitionIds } from "../domain/records.ts";
import type { SubagentServices } from "../domain/services.ts";
import { CLEANUP_NOTHING, cleanupLine } from "../prompt/checkable.ts";
import * as P from "../prompt/common.ts";

export interface CleanupParams {
	ids: string[];
	discard?: boolean;
}

type Outcome = Parameters<typeof cleanupLine>[1];

async function cleanOne(deps: Pick<SubagentServices, "store">, child: ChildRecord, discard: boolean): Promise<Outcome> {
	const w = child.worktree;
	if (!w) return { kind: "not-isolated" };
	if (!isSettled(child.state)) return { kind: "running" };
	if (!worktreeExists(w)) return { kind: "already-removed" };
	try {
		const changes = await captureChanges(w);
		if (changes.files.length === 0 && changes.commits === 0) {
			await removeWorktree(w);
			return { kind: "removed", why: "no-changes", files: 0 };
		}
		let patchPath: string | undefined;
		if (changes.patchIsUtf8 && changes.patch.length > 0) {
			const put = await deps.store().put("subagent-results", changes.patch);
			if (put.ok) patchPath = put.path;
		}
		const inTree = patchPath !== undefined && (await patchContainedIn(patchPath, w.repoTop));
		if (!inTree && !discard) return { kind: "kept", files: changes.files.length, patchPath, repoTop: w.repoTop };
		await removeWorktree(w);
		return { kind: "removed", why: inTree ? "in-tree" : "discarded", files: changes.files.length, patchPath };
	} catch (error) {
		return { kind: "failed", error: (error as Error).message };
	}
}

export async function cleanupTool(
	deps: Pick<SubagentServices, "children" | "store">,
	params: CleanupParams,
	ctx: ExtensionContext,
): Promise<{ content: Array<{ type: "text"; text: string }>; details: Record<string, unknown> }> {
	const manager = deps.children(ctx);
	const known = manager.ids();
	const { known: ids, unknown } = partitionIds(params.ids ?? [], known);
	if (unknown.length > 0) throw new Error(P.unknownIdsError(unknown, known));
	const results: Array<{ id: string; outcome: Outcome }> = [];
	// One at a time: git serialises worktree changes of one repository anyway.
	for (const id of ids) results.push({ id, outcome: await cleanOne(deps, manager.get(id)!, params.discard === true) });
	const text = results.map((r) => cleanupLine(manager.get(r.id)!, r.outcome)).join("\n");
	return {
		content: [{ type: "text", text: text || CLEANUP_NOTHING }],
		details: {
			rows: results.map((r) => ({ ...rowOf(manager.get(r.id)!), note: r.outcome.kind })),
			cleanup: results,
		},
	};
}

function rowOf(c: ChildRecord) {
	return { id: c.id, name: c.name, state: c.state };
}
