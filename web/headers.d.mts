// Types of headers.mjs (plain JavaScript, so that Node imports it as it is).
export const CSP_DIRECTIVES: string[];
export const CSP: string;
export const SINGLE_FILE_CSP_DIRECTIVES: string[];
export const HEADERS: Record<string, string>;
export const DEV_CSP_ADDITIONS: Record<string, string[]>;
export const DEV_HEADERS: Record<string, string>;
