package benchcast.ycsb;

import java.util.concurrent.atomic.AtomicLong;

/** Prints binding errors to stderr: the first 20, then every 10000th, so a failing run stays readable. */
final class ErrorLog {
  private static final AtomicLong COUNT = new AtomicLong();

  private ErrorLog() {
  }

  static void log(String where, Exception e) {
    long n = COUNT.incrementAndGet();
    if (n <= 20 || n % 10000 == 0) {
      System.err.println(where + " (error " + n + "): " + e.getMessage());
    }
  }
}
