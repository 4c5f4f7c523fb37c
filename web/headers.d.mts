// Types of headers.mjs (plain JavaScript, so that Node imports it as it is).
/** The hosts a model download from the Hugging Face Hub reaches (connect-src). */
export const HUB_HOSTS: string[];
export const CSP_DIRECTIVES: string[];
export const CSP: string;
export const SINGLE_FILE_CSP_DIRECTIVES: string[];
export const HEADERS: Record<string, string>;
export const DEV_CSP_ADDITIONS: Record<string, string[]>;
export const DEV_HEADERS: Record<string, string>;
