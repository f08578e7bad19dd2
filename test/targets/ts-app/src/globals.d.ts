// The little of Node this app uses, declared here so that tsc needs no
// @types/node.
declare const process: { pid: number; env: Record<string, string | undefined>; exit(code?: number): never };
declare function setImmediate(callback: () => void): unknown;
