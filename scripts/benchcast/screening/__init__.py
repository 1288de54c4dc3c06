"""Which fio figures track an application's results: the screen of simple fits, the rate-cap
and noise-floor checks, and the data-size stage."""
