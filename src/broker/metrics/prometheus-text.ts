/**
 * Prometheus's text exposition format (version 0.0.4): a `# HELP` and a `# TYPE` line per family, then
 * one line per sample, label values escaped (backslash, double quote, newline). A histogram's samples are
 * its cumulative `_bucket` lines (`le`, ending with `+Inf`), `_sum` and `_count`.
 * @pure
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';

/** What a histogram family's sample needs: bucket upper bounds, the count per bucket (plus overflow), sum. */
export interface HistogramValue {
  readonly bounds: readonly number[];
  readonly counts: ArrayLike<number>;
  readonly sum: number;
  readonly count: number;
}

export type Labels = Readonly<Record<string, string | number>>;

interface Family {
  name: string;
  type: MetricType;
  help: string;
  samples: Sample[];
}

interface Sample {
  /** `_bucket`, `_sum` or `_count` of a histogram. */
  suffix?: string;
  labels: Labels;
  value: number;
}

const escapeLabel = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (v: string): string => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  return String(v);
}

/** Collects families and writes them in the order they were first declared. */
export class PrometheusText {
  readonly #families = new Map<string, Family>();

  /** Declares a family (idempotent); a family without samples is still written, with its HELP and TYPE. */
  family(name: string, type: MetricType, help: string): (labels: Labels, value: number) => void {
    let f = this.#families.get(name);
    if (!f) this.#families.set(name, (f = { name, type, help, samples: [] }));
    const family = f;
    return (labels, value) => void family.samples.push({ labels, value });
  }

  /** Declares a histogram family; each call of the result writes one labelled histogram. */
  histogram(name: string, help: string): (labels: Labels, h: HistogramValue) => void {
    this.family(name, 'histogram', help);
    const family = this.#families.get(name) as Family;
    return (labels, h) => {
      let cumulative = 0;
      for (let i = 0; i <= h.bounds.length; i++) {
        cumulative += h.counts[i] ?? 0;
        const le = i < h.bounds.length ? formatValue(h.bounds[i] as number) : '+Inf';
        family.samples.push({ suffix: '_bucket', labels: { ...labels, le }, value: cumulative });
      }
      family.samples.push({ suffix: '_sum', labels, value: h.sum }, { suffix: '_count', labels, value: h.count });
    };
  }

  toString(): string {
    const out: string[] = [];
    for (const f of this.#families.values()) {
      out.push(`# HELP ${f.name} ${escapeHelp(f.help)}`, `# TYPE ${f.name} ${f.type}`);
      for (const s of f.samples) {
        const labels = Object.entries(s.labels)
          .map(([k, v]) => `${k}="${escapeLabel(String(v))}"`)
          .join(',');
        out.push(`${f.name}${s.suffix ?? ''}${labels ? `{${labels}}` : ''} ${formatValue(s.value)}`);
      }
    }
    return out.join('\n') + '\n';
  }
}
