/* Words for the notebook check's result (the Check button, checkButton.tsx). */

export function checkTitle(path: string, clean: boolean): string {
  const name = path.split('/').pop() ?? path;
  return clean ? `${name} runs from a fresh kernel` : `${name} does not reproduce from a fresh kernel`;
}
