/**
 * The ledger in Pi's TUI: a bordered, scrollable panel (↑↓ PgUp PgDn scroll, Esc/q/Enter close).
 * Every line is cut to the terminal's width with pi-tui's width-aware helper.
 */
import { type Component, Key, matchesKey, truncateToWidth, wrapTextWithAnsi } from "@mariozechner/pi-tui";

/** Rows the panel leaves to Pi's own chrome (editor, footer). */
const RESERVED_ROWS = 6;
const MIN_ROWS = 8;

export class LedgerPanel implements Component {
	private offset = 0;

	constructor(
		private readonly title: string,
		private readonly lines: () => string[],
		private readonly rows: () => number,
		private readonly paint: (color: string, text: string) => string,
		private readonly close: () => void,
	) {}

	private height(): number {
		return Math.max(MIN_ROWS, this.rows() - RESERVED_ROWS);
	}

	/** The lines wrapped to the width last drawn (long read calls wrap, never lose their end). */
	private wrapped(width: number): string[] {
		return this.lines().flatMap((l) => (l === "" ? [""] : wrapTextWithAnsi(l, Math.max(10, width))));
	}

	private width = 80;

	handleInput(data: string): void {
		const body = this.wrapped(this.width).length;
		const page = Math.max(1, this.height() - 3);
		if (matchesKey(data, Key.escape) || matchesKey(data, Key.enter) || data === "q") {
			this.close();
			return;
		}
		if (matchesKey(data, Key.up)) this.offset -= 1;
		else if (matchesKey(data, Key.down)) this.offset += 1;
		else if (matchesKey(data, Key.pageUp)) this.offset -= page;
		else if (matchesKey(data, Key.pageDown)) this.offset += page;
		this.offset = Math.max(0, Math.min(this.offset, Math.max(0, body - page)));
	}

	render(width: number): string[] {
		this.width = width;
		const all = this.wrapped(width);
		const page = Math.max(1, this.height() - 3);
		const shown = all.slice(this.offset, this.offset + page);
		const rule = this.paint("borderMuted", "─".repeat(Math.max(0, width)));
		const more = all.length > page ? ` ${this.offset + 1}–${this.offset + shown.length} of ${all.length}` : "";
		const hint = this.paint("dim", `↑↓ scroll · esc close${more}`);
		return [
			rule,
			truncateToWidth(this.paint("accent", this.title), width),
			...shown.map((l) => truncateToWidth(l, width)),
			truncateToWidth(hint, width),
			rule,
		];
	}

	invalidate(): void {}
}
