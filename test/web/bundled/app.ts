// An app that imports the npm package by name, bundled the way users bundle it.
import { decodeCommit, encodeCommit } from "cairndb";
// @ts-ignore: plain JS helper shared with the no-bundler page
import { check } from "../page_check.js";

check(decodeCommit, encodeCommit);
