/**
 * A map from strings to values for keys that are fresh strings each time they are asked for (a scan's lines,
 * sliced from the text): a `Map<string, V>` hashes every new string it is given, about 3 ns a character, which
 * was most of the cost of folding a found line into its repeats (issue 32 item 4). Here keys are bucketed by
 * their length and compared with `===` within a bucket (no hash); a bucket that would pass BUCKET_MAX keys moves
 * to a hashed Map, so no lookup compares more than BUCKET_MAX strings, however many keys share a length.
 */

/** Most keys of one length compared one by one; past it, keys of that length are hashed. */
export const BUCKET_MAX = 8;

/** Keys of one length and their values, in parallel. */
interface Bucket<V> {
	keys: string[];
	values: V[];
}

/** Pure data structure: `get`/`set`/`delete`/`size` as a Map<string, V> has them. */
export class LineMap<V> {
	/** Per key length: its keys while they are few, or null once they are hashed in `hashed`. */
	private readonly buckets = new Map<number, Bucket<V> | null>();
	private hashed: Map<string, V> | undefined;
	private count = 0;

	/** How many keys it holds. */
	get size(): number {
		return this.count;
	}

	get(key: string): V | undefined {
		const bucket = this.buckets.get(key.length);
		if (bucket === undefined) return undefined;
		if (bucket === null) return this.hashed?.get(key);
		const keys = bucket.keys;
		for (let i = 0; i < keys.length; i++) if (keys[i] === key) return bucket.values[i];
		return undefined;
	}

	set(key: string, value: V): this {
		const bucket = this.buckets.get(key.length);
		if (bucket === null) {
			const hashed = this.hashed as Map<string, V>;
			if (!hashed.has(key)) this.count++;
			hashed.set(key, value);
			return this;
		}
		if (bucket === undefined) {
			this.buckets.set(key.length, { keys: [key], values: [value] });
			this.count++;
			return this;
		}
		const at = bucket.keys.indexOf(key);
		if (at !== -1) {
			bucket.values[at] = value;
			return this;
		}
		this.count++;
		if (bucket.keys.length < BUCKET_MAX) {
			bucket.keys.push(key);
			bucket.values.push(value);
			return this;
		}
		// Too many keys of this length to compare one by one: hash them from now on.
		this.hashed ??= new Map();
		for (let i = 0; i < bucket.keys.length; i++) this.hashed.set(bucket.keys[i], bucket.values[i]);
		this.hashed.set(key, value);
		this.buckets.set(key.length, null);
		return this;
	}

	delete(key: string): boolean {
		const bucket = this.buckets.get(key.length);
		if (bucket === undefined) return false;
		if (bucket === null) {
			const gone = this.hashed?.delete(key) === true;
			if (gone) this.count--;
			return gone;
		}
		const at = bucket.keys.indexOf(key);
		if (at === -1) return false;
		this.count--;
		if (bucket.keys.length === 1) this.buckets.delete(key.length);
		else {
			bucket.keys.splice(at, 1);
			bucket.values.splice(at, 1);
		}
		return true;
	}
}
