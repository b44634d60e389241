/* heaptape tests -- a statically linked program (attach.sh: heaptape attach
** refuses it): allocates a little, then sleeps until killed. */
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
  for (;;) { free(malloc(100)); usleep(10000); }
}
