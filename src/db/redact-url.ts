/** A connection URL fit for logs and error messages: the password is masked. */
export function redactUrl(url: string): string {
  return url.replace(/(\/\/[^:@/]*):[^@/]*@/, '$1:***@');
}
