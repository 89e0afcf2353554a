/**
 * The first start's operator account and its password, printed once: by `serve` when its
 * first start created `admin`, by `init` when it did. The same words either way (README
 * "Two commands"), so a script or a person reading either finds them.
 */
export function printFirstOperator(operator: { login: string; password: string }): void {
  console.log('First start: created the operator account. This password is shown only once:');
  console.log(`  login: ${operator.login}`);
  console.log(`  password: ${operator.password}`);
}
