import autocannon from 'autocannon';

export interface LoadTarget {
  url: string;
  connections: number;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
}

export interface LoadFigures {
  requestsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  ok2xx: number;
  /** Answers other than 2xx plus connection errors and timeouts: a run with many is not a measurement. */
  failures: number;
  durationS: number;
}

export interface RunningLoad {
  done: Promise<LoadFigures>;
  /** Ends the load early; `done` then resolves with the figures so far. */
  stop(): void;
}

function optionsFor(target: LoadTarget, durationS: number): autocannon.Options {
  return {
    url: target.url,
    connections: target.connections,
    duration: durationS,
    method: target.method ?? 'GET',
    headers: target.headers ?? {},
    ...(target.body === undefined ? {} : { body: target.body }),
  };
}

function figuresOf(result: autocannon.Result): LoadFigures {
  return {
    requestsPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    ok2xx: result['2xx'],
    failures: result.non2xx + result.errors + result.timeouts,
    durationS: result.duration,
  };
}

export function startLoad(target: LoadTarget, durationS: number): RunningLoad {
  let instance: autocannon.Instance | undefined;
  const done = new Promise<LoadFigures>((resolve, reject) => {
    instance = autocannon(optionsFor(target, durationS), (err: unknown, result) => {
      if (err) reject(err instanceof Error ? err : new Error(String(err)));
      else resolve(figuresOf(result));
    });
  });
  return { done, stop: () => instance?.stop() };
}

export function runLoad(target: LoadTarget, durationS: number): Promise<LoadFigures> {
  return startLoad(target, durationS).done;
}
