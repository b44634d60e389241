/* heaptape -- `heaptape record --python` (cli/record_python.c): the
** environment that makes python3 start the heaptape module before the script. */
#ifndef HT_RECORD_PYTHON_H
#define HT_RECORD_PYTHON_H

/* In the child, before exec: PYTHONPATH to the module's start-up file
** (keeping the user's in HEAPTAPE_PYTHONPATH), the tape; native 0 also takes
** libheaptape out of LD_PRELOAD. 0 on success. */
int ht_record_python_env(const char *tape, int native);

#endif
