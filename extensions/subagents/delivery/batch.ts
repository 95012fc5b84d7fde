/**
 * One batch of child results through the shared allocator and projection primitive: every place
 * the parent receives child output (wait, automatic delivery, check, cancel) comes through here.
 */

import {
	type Allocation,
	allocateBatchBudgets,
	type Surface,
	type SurfaceCaps,
	type UsageReading,
} from "../../shared/budget/batch.ts";
import { type Projection, project } from "../../shared/projection/projection.ts";
import type { ArtifactStore } from "../../shared/store/artifact-store.ts";
import type { SurfaceBudget } from "../../shared/surfaces.ts";
import { utf8Length } from "../../shared/text/tokens.ts";
import { countLines } from "../../shared/text/utf8.ts";

/** Separator between entries of a batch. */
export const ENTRY_SEPARATOR = "\n\n";

/** One result to project, with the header the parent sees above it. */
export interface BatchInput {
	/** Child id. */
	id: string;
	/** Run number of the result. */
	run: number;
	/** Line shown above the projection. */
	header: string;
	/** The exact full text (what the artifact must hold). */
	text: string;
	/** Line to show instead when the batch has no room: given the stored path, or the store error. */
	noRoom: (stored: { ok: true; path: string } | { ok: false; error: string }, bytes: number, lines: number) => string;
}

/** What became of one result in a batch (also the tool result details the renderers use). */
export interface BatchItem {
	/** Child id. */
	id: string;
	/** Run number. */
	run: number;
	/** UTF-8 bytes of the full text. */
	fullBytes: number;
	/** Lines of the full text as Pi's read counts them. */
	fullLines: number;
	/** UTF-8 bytes the parent sees for this result (header and projection). */
	shownBytes: number;
	/** UTF-8 bytes of the projection alone (0 for a one-line entry). */
	projectedBytes: number;
	/** True when only head and tail are shown. */
	truncated: boolean;
	/** True when the batch had no room and only a status line with the path is shown. */
	oneLine: boolean;
	/** Artifact path holding the full text, when stored. */
	artifactPath?: string;
	/** The read call that shows the first omitted lines. */
	read?: { path: string; offset: number; limit: number };
	/** Store failure, when the full text could not be saved. */
	storeError?: string;
}

export interface BatchOutput {
	/** The whole text: leading lines, then one entry per result, separated by blank lines. */
	text: string;
	/** One entry per input, in order. */
	items: BatchItem[];
	/** Every artifact path the text refers to. */
	artifacts: string[];
	/** The allocator's decision (cap, source, reason). */
	allocation: Allocation;
}

export interface BatchOptions {
	/** Which budget caps apply. */
	surface: Surface;
	/** Where full texts of projected results go. */
	store: ArtifactStore;
	/** The parent's context reading (ctx.getContextUsage()); absent → static caps. */
	usage?: UsageReading | null;
	/** Tokens kept free for the parent's answer (its model's maxTokens). */
	reservedOutputTokens?: number;
	/** Lines before the results (title, status of unfinished children); counted as batch wrapper. */
	leading?: string[];
	/** Head share for the projection (check previews use 0: the recent end). */
	headShare?: number;
	/** The surface's budget resolved from the configuration (surfaceFor); absent: the table's entry. */
	budget?: SurfaceBudget;
	/** Overrides of the budget's caps. */
	caps?: Partial<SurfaceCaps>;
	/** Share of the headroom a batch may use (config budgets.headroomShare). */
	headroomShare?: number;
}

export { countLines } from "../../shared/text/utf8.ts";

export async function projectBatch(inputs: BatchInput[], options: BatchOptions): Promise<BatchOutput> {
	const leading = options.leading?.filter((l) => l.length > 0) ?? [];
	const leadingText = leading.join("\n");
	const sizes = inputs.map((i) => ({ bytes: utf8Length(i.text), lines: countLines(i.text) }));
	const headerBytes = inputs.reduce((m, i) => Math.max(m, utf8Length(i.header)), 0);
	const allocation = allocateBatchBudgets({
		surface: options.surface,
		results: sizes,
		usage: options.usage ?? undefined,
		reservedOutputTokens: options.reservedOutputTokens,
		wrapperBytesPerResult: headerBytes + 1 + ENTRY_SEPARATOR.length,
		wrapperBytesPerBatch: leadingText.length > 0 ? utf8Length(leadingText) + ENTRY_SEPARATOR.length : 0,
		budget: options.budget,
		caps: options.caps,
		headroomShare: options.headroomShare,
	});
	const parts: string[] = leadingText.length > 0 ? [leadingText] : [];
	const items: BatchItem[] = [];
	const artifacts: string[] = [];
	for (let i = 0; i < inputs.length; i++) {
		const input = inputs[i];
		const slot = allocation.items[i];
		const { bytes, lines } = sizes[i];
		if (slot.oneLine || !slot.limits) {
			const put = await options.store.put("subagent-results", input.text);
			const line = input.noRoom(put.ok ? { ok: true, path: put.path } : { ok: false, error: put.error }, bytes, lines);
			if (put.ok) artifacts.push(put.path);
			parts.push(line);
			items.push({
				id: input.id,
				run: input.run,
				fullBytes: bytes,
				fullLines: lines,
				shownBytes: utf8Length(line),
				projectedBytes: 0,
				truncated: true,
				oneLine: true,
				artifactPath: put.ok ? put.path : undefined,
				read: put.ok ? { path: put.path, offset: 1, limit: Math.min(lines, 200) } : undefined,
				storeError: put.ok ? undefined : put.error,
			});
			continue;
		}
		const projection: Projection = await project(input.text, slot.limits, {
			headShare: options.headShare,
			sink: options.store.asyncSink("subagent-results"),
		});
		const entry = `${input.header}\n${projection.text}`;
		parts.push(entry);
		const artifact = projection.artifact?.ok ? projection.artifact.path : undefined;
		if (artifact) artifacts.push(artifact);
		items.push({
			id: input.id,
			run: input.run,
			fullBytes: bytes,
			fullLines: lines,
			shownBytes: utf8Length(entry),
			projectedBytes: utf8Length(projection.text),
			truncated: projection.truncated,
			oneLine: false,
			artifactPath: artifact,
			read:
				artifact && projection.readOffset !== undefined && projection.readLimit !== undefined
					? { path: artifact, offset: projection.readOffset, limit: projection.readLimit }
					: undefined,
			storeError: projection.artifact && !projection.artifact.ok ? projection.artifact.error : undefined,
		});
	}
	return { text: parts.join(ENTRY_SEPARATOR), items, artifacts, allocation };
}
