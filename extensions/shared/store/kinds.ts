/**
 * The kinds of artifact the store keeps, each a directory under the store root, and which kinds also hold
 * per-session folders (made through ArtifactStore.ensureKindDir(kind, name)) and what such a folder may hold.
 * The listing and pruning (list.ts) work from this table alone.
 */

export type ArtifactKind = "subagent-results" | "tool-outputs" | "transcripts" | "handoffs";
export const ARTIFACT_KINDS: readonly ArtifactKind[] = ["subagent-results", "tool-outputs", "transcripts", "handoffs"];

/** A per-session folder name: one plain name (letters, digits, ".", "_", "-", at most 128; not "." or ".."). */
export const FOLDER_NAME = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;

/** Kinds whose directory also holds per-session folders, with the file names such a folder may hold. */
export const KIND_FOLDERS: Readonly<Partial<Record<ArtifactKind, { files: RegExp }>>> = Object.freeze({
	// handoff trajectories of sessions without a session file: <session id>/*.json
	handoffs: { files: /\.json$/ },
});

export function isKind(kind: unknown): kind is ArtifactKind {
	return typeof kind === "string" && (ARTIFACT_KINDS as readonly string[]).includes(kind);
}
