package benchcast.ycsb;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.Vector;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

/**
 * YCSB binding for MariaDB (and MySQL) over JDBC, one connection per client thread.
 *
 * <p>The table (YCSB property {@code table}, default usertable) has YCSB_KEY VARCHAR(255) PRIMARY KEY
 * and one column per field (field0..field{fieldcount-1}); it is created with ENGINE=InnoDB when
 * absent, by the first client of the process.
 *
 * <p>Properties:
 * <ul>
 * <li>{@code db.url} (required), {@code db.user}, {@code db.passwd}: the connection.</li>
 * <li>{@code db.droptable} (false): drop and recreate the table before the first client starts
 *     (set on load).</li>
 * <li>{@code db.fieldtype} (TEXT): SQL type of the field columns.</li>
 * <li>{@code db.engine} (InnoDB): storage engine of a created table.</li>
 * <li>{@code db.batchsize} (0): when &gt; 0, inserts are sent in JDBC batches of this size, each
 *     committed as one transaction (returns BATCHED_OK). Every other statement autocommits.</li>
 * </ul>
 */
public class JdbcClient extends DB {
  private static final Object LOCK = new Object();
  private static boolean tableReady = false;

  private Connection conn;
  private String table;
  private int batchSize;
  private int pending;
  private PreparedStatement batchStatement;
  private final Map<String, PreparedStatement> statements = new HashMap<>();

  @Override
  public void init() throws DBException {
    Properties p = getProperties();
    String url = p.getProperty("db.url");
    if (url == null || url.isEmpty()) {
      throw new DBException("JdbcClient: property db.url is required");
    }
    table = p.getProperty("table", "usertable");
    batchSize = Integer.parseInt(p.getProperty("db.batchsize", "0"));
    try {
      conn = DriverManager.getConnection(url, p.getProperty("db.user", "root"), p.getProperty("db.passwd", ""));
      conn.setAutoCommit(true);
      synchronized (LOCK) {
        if (!tableReady) {
          prepareTable(p);
          tableReady = true;
        }
      }
    } catch (SQLException e) {
      throw new DBException("JdbcClient: cannot connect to " + url + ": " + e.getMessage(), e);
    }
  }

  private void prepareTable(Properties p) throws SQLException {
    int fieldCount = Integer.parseInt(p.getProperty("fieldcount", "10"));
    String prefix = p.getProperty("fieldnameprefix", "field");
    String type = p.getProperty("db.fieldtype", "TEXT");
    String engine = p.getProperty("db.engine", "InnoDB");
    StringBuilder sql = new StringBuilder("CREATE TABLE IF NOT EXISTS " + table
        + " (YCSB_KEY VARCHAR(255) PRIMARY KEY");
    for (int i = 0; i < fieldCount; i++) {
      sql.append(", ").append(prefix).append(i).append(' ').append(type);
    }
    sql.append(") ENGINE=").append(engine);
    try (Statement st = conn.createStatement()) {
      if (Boolean.parseBoolean(p.getProperty("db.droptable", "false"))) {
        st.execute("DROP TABLE IF EXISTS " + table);
      }
      st.execute(sql.toString());
    }
  }

  private PreparedStatement statement(String sql) throws SQLException {
    PreparedStatement ps = statements.get(sql);
    if (ps == null) {
      ps = conn.prepareStatement(sql);
      statements.put(sql, ps);
    }
    return ps;
  }

  private static String columns(Set<String> fields) {
    return fields == null ? "*" : String.join(", ", fields);
  }

  private static void fill(ResultSet rs, Set<String> fields, Map<String, ByteIterator> result)
      throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    for (int i = 1; i <= md.getColumnCount(); i++) {
      String name = md.getColumnLabel(i);
      if (name.equalsIgnoreCase("YCSB_KEY")) {
        continue;
      }
      String value = rs.getString(i);
      result.put(name, new StringByteIterator(value == null ? "" : value));
    }
  }

  @Override
  public Status read(String tableName, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      PreparedStatement ps = statement("SELECT " + columns(fields) + " FROM " + tableName + " WHERE YCSB_KEY = ?");
      ps.setString(1, key);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return Status.NOT_FOUND;
        }
        fill(rs, fields, result);
      }
      return Status.OK;
    } catch (SQLException e) {
      ErrorLog.log("JdbcClient read", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status scan(String tableName, String startkey, int recordcount, Set<String> fields,
                     Vector<HashMap<String, ByteIterator>> result) {
    try {
      PreparedStatement ps = statement("SELECT " + columns(fields) + ", YCSB_KEY FROM " + tableName
          + " WHERE YCSB_KEY >= ? ORDER BY YCSB_KEY LIMIT ?");
      ps.setString(1, startkey);
      ps.setInt(2, recordcount);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          fill(rs, fields, row);
          result.add(row);
        }
      }
      return Status.OK;
    } catch (SQLException e) {
      ErrorLog.log("JdbcClient scan", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status update(String tableName, String key, Map<String, ByteIterator> values) {
    TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
    List<String> sets = new ArrayList<>();
    for (String f : sorted.keySet()) {
      sets.add(f + " = ?");
    }
    try {
      PreparedStatement ps = statement("UPDATE " + tableName + " SET " + String.join(", ", sets)
          + " WHERE YCSB_KEY = ?");
      int i = 1;
      for (ByteIterator v : sorted.values()) {
        ps.setString(i++, v.toString());
      }
      ps.setString(i, key);
      int n = ps.executeUpdate();
      return n == 1 ? Status.OK : Status.NOT_FOUND;
    } catch (SQLException e) {
      ErrorLog.log("JdbcClient update", e);
      return Status.ERROR;
    }
  }

  @Override
  public Status insert(String tableName, String key, Map<String, ByteIterator> values) {
    TreeMap<String, ByteIterator> sorted = new TreeMap<>(values);
    String marks = "?" + ", ?".repeat(sorted.size());
    try {
      PreparedStatement ps = statement("INSERT INTO " + tableName + " (YCSB_KEY, "
          + String.join(", ", sorted.keySet()) + ") VALUES (" + marks + ")");
      ps.setString(1, key);
      int i = 2;
      for (ByteIterator v : sorted.values()) {
        ps.setString(i++, v.toString());
      }
      if (batchSize > 0) {
        ps.addBatch();
        batchStatement = ps;
        if (++pending >= batchSize) {
          flush();
        }
        return Status.BATCHED_OK;
      }
      return ps.executeUpdate() == 1 ? Status.OK : Status.UNEXPECTED_STATE;
    } catch (SQLException e) {
      ErrorLog.log("JdbcClient insert", e);
      return Status.ERROR;
    }
  }

  private void flush() throws SQLException {
    if (batchStatement != null && pending > 0) {
      conn.setAutoCommit(false);
      try {
        batchStatement.executeBatch();
        conn.commit();
      } finally {
        conn.setAutoCommit(true);
      }
    }
    pending = 0;
  }

  @Override
  public Status delete(String tableName, String key) {
    try {
      PreparedStatement ps = statement("DELETE FROM " + tableName + " WHERE YCSB_KEY = ?");
      ps.setString(1, key);
      return ps.executeUpdate() == 1 ? Status.OK : Status.NOT_FOUND;
    } catch (SQLException e) {
      ErrorLog.log("JdbcClient delete", e);
      return Status.ERROR;
    }
  }

  @Override
  public void cleanup() throws DBException {
    if (conn == null) {
      return;
    }
    try {
      flush();
      for (PreparedStatement ps : statements.values()) {
        ps.close();
      }
      statements.clear();
      conn.close();
    } catch (SQLException e) {
      throw new DBException("JdbcClient: cleanup failed: " + e.getMessage(), e);
    } finally {
      conn = null;
    }
  }
}
