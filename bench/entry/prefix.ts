/** Marks the lines of a server runtime's stdout that carry bench messages. */
export const MESSAGE_PREFIX = "@@bench ";
