/**
 * Wording about records of the parent's session file that failed their checks (delivery/record-checks.ts):
 * the model and the user are told which part was refused and what that means, never left with a throw.
 */

/** The result text of a settled record whose text was not a string. */
export function damagedResultText(id: string, problem: string): string {
	return (
		`[${id}'s recorded result is damaged in the session file (${problem}); it is not shown. ` +
		"Spawn a new child if you still need that work.]"
	);
}

/** A note ahead of a result whose worktree record was refused. */
export function damagedWorktreeNote(id: string, problem: string): string {
	return (
		`[${id}'s worktree record in the session file was refused (${problem}): ` +
		"the package will not clean up, diff or reuse that folder; remove it by hand if it exists.]"
	);
}

/** Why a recorded pipeline stage is not spawned again: its recorded parameters fail the spawn tool's checks. */
export function damagedSpawnError(problem: string): string {
	return `its recorded spawn parameters are damaged (${problem})`;
}

/** One warning for the user when records were refused. */
export function damagedRecordsWarning(items: readonly string[]): string {
	return `subagents: ${items.length} damaged record${items.length === 1 ? "" : "s"} in this session file, their unsafe parts ignored: ${items.join("; ")}`;
}
