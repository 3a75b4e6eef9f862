import type { Command } from 'commander';
import type { CliIo } from '../context.js';

/** `stampgate stake index|import`. */
export function stakeCommand(program: Command, io: CliIo): void {
  void program;
  void io;
}
