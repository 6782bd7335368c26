/** CPU time this process has used so far, in milliseconds (user + system). */
export function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
