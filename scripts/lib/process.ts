/** Child processes for the scripts: run to completion, or capture output while echoing it. */

export async function run(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<void> {
  const status = await new Deno.Command(cmd, {
    args,
    env: options.env,
    stdout: "inherit",
    stderr: "inherit",
  })
    .spawn().status;
  if (!status.success) throw new Error(`${cmd} ${args.join(" ")} exited with ${status.code}`);
}

/** Runs a command, streaming its output through while keeping a copy; never throws on exit code. */
export async function runTee(
  cmd: string,
  args: string[],
  options: { env?: Record<string, string> } = {},
): Promise<{ code: number; output: string }> {
  const child = new Deno.Command(cmd, { args, env: options.env, stdout: "piped", stderr: "piped" })
    .spawn();
  const decoder = new TextDecoder();
  let output = "";
  const pump = async (
    stream: ReadableStream<Uint8Array>,
    sink: { write(b: Uint8Array): Promise<number> },
  ) => {
    for await (const chunk of stream) {
      output += decoder.decode(chunk, { stream: true });
      await sink.write(chunk);
    }
  };
  const [status] = await Promise.all([
    child.status,
    pump(child.stdout, Deno.stdout),
    pump(child.stderr, Deno.stderr),
  ]);
  return { code: status.code, output };
}
