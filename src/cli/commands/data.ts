import type { Command } from 'commander';
import type { CliIo } from '../context.js';

/** `stampgate data import FILE…`. */
export function dataCommand(program: Command, io: CliIo): void {
  void program;
  void io;
}
