/**
 * A pure function's answers remembered by their string argument, for hot
 * paths where real traffic repeats the same few inputs (user agents, page
 * URLs, referrers). At most `maxEntries` answers are kept; when full, the
 * oldest one goes, so a flood of distinct inputs costs what it cost without
 * the memo and no more memory than the bound. Inputs longer than
 * `maxInputLength` are answered without being remembered.
 *
 * Answers are shared between callers: a function whose answer is an object
 * must not have it changed by them.
 */
export function boundedMemo<T>(
  fn: (input: string) => T,
  options: { maxEntries: number; maxInputLength?: number },
): (input: string) => T {
  const { maxEntries, maxInputLength = Infinity } = options;
  const answers = new Map<string, T>();
  return (input) => {
    if (input.length > maxInputLength) return fn(input);
    const known = answers.get(input);
    if (known !== undefined || answers.has(input)) return known as T;
    const answer = fn(input);
    if (answers.size >= maxEntries) answers.delete(answers.keys().next().value!);
    answers.set(input, answer);
    return answer;
  };
}
