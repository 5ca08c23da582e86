/** The package ships no types: the part the launcher uses. */
declare module 'parse-prometheus-text-format' {
  /** One sample of a family (counters and gauges: `value`). */
  export interface PrometheusSample {
    value?: string;
    labels?: Record<string, string>;
  }
  /** One metric family of the text format. */
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: string;
    metrics: PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
