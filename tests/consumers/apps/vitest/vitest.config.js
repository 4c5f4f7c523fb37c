// A plain object (no import of vitest/config needed).
export default { test: { include: ['*.spec.js'], watch: false } };
