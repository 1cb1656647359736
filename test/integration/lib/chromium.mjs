// Debian's chromium through puppeteer-core (nothing is downloaded), headless,
// for the status page's tests.
import puppeteer from 'puppeteer-core';

export function launchChromium() {
  return puppeteer.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless=new', '--disable-gpu', '--disable-dev-shm-usage'],
  });
}
